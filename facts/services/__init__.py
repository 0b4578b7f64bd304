"""The facts domain: every rule of facts-memory.md lives in these functions.

Views, model tools and the context builder call them; each takes the acting principal and
does its own transaction.
"""
