"""LoCoMo long-term conversational memory benchmark (Maharana et al., ACL 2024)."""
