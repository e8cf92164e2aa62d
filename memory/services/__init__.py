"""Writes of memories, one module per use case.

- `notes`: notes from the save_memory tool, from an agent (memory.mcp) and from a teacher;
- `records`: the memories of app records (a graded quiz, an uploaded file), a conversation's
  summary, what the model drew from other memories, and approaches' quiz outcomes;
- `edits`: a teacher's edit of a memory;
- `lifecycle`: archiving (by a teacher, the admin, an agent, or a merge) and re-indexing;
- `embedding`: the vectors recall uses;
- `writing`: the steps every write shares.

Every write keeps the full-text index in sync inside its own transaction (through
memory.search.backend), stamps what it writes with the student's next memory revision
(`writing.student_revision_next`, which the vector cache follows), and enqueues the
memory's embedding after commit (the task `memory.tasks.memory_embed`, named, never imported):
embeddings are never computed in the request.
"""
