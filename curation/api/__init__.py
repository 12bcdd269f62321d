"""The REST API (DRF): serializers, role permissions, viewsets over ``curation.services``, routes."""
