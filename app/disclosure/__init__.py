"""The provider's own disclosure: invitations, the questionnaire, uploads, the analyst's review, the merge."""
