"""The bounds of a mail search, in one leaf module: the tools publish them, the work enforces them."""

MAX_QUERY_CHARACTERS = 2_000
MAX_QUERY_TERMS = 32
