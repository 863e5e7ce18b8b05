// Timers with a string body evaluate it.
setTimeout('globalThis.pwned = true', 10)
