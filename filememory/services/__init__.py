"""File-memory domain operations: every rule about files lives here."""
