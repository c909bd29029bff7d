"""Vetting rules; every module here registers its rules with app.vetting.findings.rule."""
