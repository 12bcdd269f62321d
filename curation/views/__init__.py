"""Server-rendered reviewer pages (htmx): dashboard, workloads, review queue, exports, tuner runs.

One module per area. Views parse the request, call ``curation.services`` and render a template; no
domain logic lives here. Every page requires login (``curation.views.access``); an action is shown only
to roles that may take it, and refused on the server to the others.
"""
