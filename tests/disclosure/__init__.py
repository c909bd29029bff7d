"""Provider disclosure: invitations, the provider's form, uploads, review and merge (issue 14)."""
