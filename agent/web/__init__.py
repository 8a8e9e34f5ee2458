"""The opt-in web search path (issue 18, docs/web-search.md).

search.py: the provider interface and SearxNG's JSON API; fetch.py: fetching a page a
search engine chose without letting it reach the server's own network; evidence.py: pages
turned into transient Sources the loop audits like collection evidence.
"""
