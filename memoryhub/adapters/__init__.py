"""Framework adapters for the client (``memoryhub.client``); each imports no server code."""
