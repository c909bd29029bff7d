"""Buyer advice: questionnaire answers, sizing arithmetic, offer ranking, checklist and FAQ.

Pure modules (no Flask, no database): the services layer feeds them plain facts about the registry's
offers and stored findings, and renders or stores what they return.
"""
