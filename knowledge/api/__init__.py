"""REST API for collections, members, documents and search (/api/v1/), one module per resource.

One APIView per use case, with nested serializers, calling services and selectors (HackSoft
style). Every lookup goes through `selectors.collection_get`/`document_get`: an outsider gets
404, a member whose role is too low gets 403. Errors have one shape (knowledge.api_errors);
routes are in knowledge.api_urls.
"""
