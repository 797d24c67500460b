"""The consent gate: the manifest's projects and routes, the traits every plugin describes its things by, the one
decision of which projects own a thing, and what the person is told of it (access why, access list).
"""
