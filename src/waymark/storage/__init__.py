"""The storage seam: the only code that imports apsw or runs SQL.

Plain functions over a connection, taking and returning plain values; the library owns
transactions. A PostgreSQL package would implement the same module and function names.
"""
