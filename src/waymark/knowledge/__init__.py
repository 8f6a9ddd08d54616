"""What a project knows in writing besides its memories: Markdown notes and procedures (an
Obsidian vault among them), and a dbt project's artifacts and lineage; read, indexed and
asked here. The code's own structure is `codemap`'s."""
