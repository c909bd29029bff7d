"""Import and export of providers as JSON or CSV; an import is previewed, then applied all or nothing.

Import matches each provider of the file to a stored one by credit code (or by the file's ``id``) and
updates it; the others are created (see app.registry.import_plan). A dry run is the preview: per provider
new / update / unchanged with every changed field (old -> new), and every refused row with its column.
Applying with the preview's ``expected`` tokens refuses, writing nothing, when a provider changed since.
CSV headers may be English (below) or Chinese (``ZH_COLUMNS``, the export's ``headers="zh"`` variant);
a column the file leaves out keeps the stored values. Messages go through gettext (the UI language).

JSON (``{"format": "gpuvet-providers", "version": 1, "exported_at": ..., "providers": [...]}``) carries every
field of every record exactly as `provider_input(portable=True)` gives it; offers name their datacenter
with ``datacenter_name``. Re-imported into an empty database it reproduces every record. JSON import also
accepts a bare list of providers and API output (``{"items": [...]}``, with ids and ``datacenter_id``).

CSV has one row per offer, plus one row per datacenter without offers (or one row for a provider with
neither). Columns: the provider's fields (``legal_name``, ``uscc`` ...), the numbered licences, filings and
certifications (``licence_1_number_raw``, ``licence_1_business_items``, ``filing_2_kind``,
``certification_1_level`` ...), the row's datacenter (``datacenter_name``, ``datacenter_province``,
``datacenter_city``) and the offer (``offer_name``, ``offer_kind``, ``gpu_model`` ... ``offer_notes``).
Provider-level columns are repeated on every row of a provider; on import they may also be left blank
on the rows after the first, but they must not contradict each other. Consecutive rows with the same
``uscc`` (or, without one, the same ``legal_name``, or with both blank) belong to one provider. Lists are
written joined with "、"; booleans true/false (是/否 accepted); dates YYYY-MM-DD (2024/1/5 and
2024年1月5日 accepted). Cells starting with = + - @ get a leading ' on export (so spreadsheets do not run
them as formulas) that import removes again.

What round-trips through CSV: every field of providers, licences, filings, certifications, datacenters and
offers, including the order of every list. What only JSON carries: exact types (CSV is text, so a
spreadsheet may rewrite long digit-only codes or dates; see above for what import tolerates) and
the export metadata (format, version, exported_at). Export writes UTF-8 with a BOM so that Excel opens it
correctly; import reads UTF-8 with or without a BOM, and GBK/GB18030 (what Excel in China saves).
"""
