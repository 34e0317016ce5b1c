"""Operation declarations shared by spaces and vector utilities (no space imports at module level)."""
