"""The provider registry: providers and their records, import and export, demo data, the dashboard."""
