"""Server-rendered reviewer pages (htmx): dashboard, workloads, review queue, exports, tuner runs.

Views parse the request, call ``curation.services`` and render a template; no domain logic lives here.
"""
