"""Curation: what becomes memory (the review queue), and later what stays and what is learned.

Nothing here runs a model, and nothing inferred is ever written as an active memory: it is
proposed as a candidate, and only an approval (a person's, or an agent's on request) turns
it into one.
"""
