"""One module per route; each takes a RouteContext and returns a Response."""
