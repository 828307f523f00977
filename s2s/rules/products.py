"""(filled in by the rules work)."""
