// Sends the deep-linking response back to the platform at once (the button is the fallback).
document.getElementById("lti-auto-submit")?.submit();
