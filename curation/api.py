"""REST API (Django REST framework) for scripts: serializers and viewsets over ``curation.services``.

Documented by the OpenAPI schema at ``/api/schema/`` (drf-spectacular); token authentication for scripts.
"""
