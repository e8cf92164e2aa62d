"""The chat turn, cut by phase: one message from `message_send` to its stored reply, each module
entered once per turn and in order (docs/architecture.md has the map):

- `claim`: begin (the claim statement, or its transaction), the lease, and its release;
- `window`: the model's limits, what fits them, what a refusal teaches;
- `prompt`: the prompt blocks built in their database step, the history compressed;
- `drive`: the turn's task, the model's rounds streamed through screening (`feed`: its events);
- `tools`: the tools offered and the model's calls run between rounds;
- `finish`: the reply stored with its usage and access log (the finish statement), or abandoned.

Imports run one way, down this list's reverse (drive imports the phases; no phase imports drive).
"""
