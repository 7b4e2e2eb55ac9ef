"""Operator tools: export/import (JSON Lines), bulk memory import, re-embedding, backup/restore."""
