"""Local stand-ins for the outside world: a website server and the official lookup systems (loopback only)."""
