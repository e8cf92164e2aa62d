"""What a stopping server tells the clients it refuses (tutor.server.Drain) and the turns it ends
(conversations.turn.drive): wait this many seconds, then retry. Through a load balancer the retry
reaches another server at once. This module imports nothing, so the server can read it before
Django is set up."""

DRAIN_RETRY_AFTER_SECONDS = 2
