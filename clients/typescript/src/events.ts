// Generated from openapi.yaml by `npm run generate` (events.mjs): do not edit.

/** The `event` names of the turn's Server-Sent Events: the schema's TurnEvent discriminator. */
export const TURN_EVENT_NAMES = ["message", "delta", "memory", "quiz", "safety", "reply_replaced", "done", "error"] as const;
