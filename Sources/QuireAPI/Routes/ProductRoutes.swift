import QuireHTTP

/// The product routes (openapi.yaml), each with its handler and the access it needs.
extension APIContext {
    /// Adds every route of openapi.yaml, each with the access it needs (checked by ``AccessControl``
    /// before the handler runs).
    func addRoutes(to router: inout Router) {
        router.on("GET", "/v1/lists", access: .listIndex) { [self] in try listIndex($0, $2) }
        // Writes wait on the store off libmicrohttpd's threads but for a lone one on a local disk (see
        // WritePlacement): a commit waiting on the store must not hold up the other connections of its worker thread.
        router.on("PUT", "/v1/lists/{list}", access: .writeList) { [self] request, parameters, _ in
            try putList(request, parameters)
        }
        router.on("GET", "/v1/lists/{list}", access: .readList) { [self] request, parameters, _ in
            try page(request, parameters)
        }
        router.on("DELETE", "/v1/lists/{list}", access: .writeList) { [self] request, parameters, _ in
            try deleteList(request, parameters)
        }
        router.on("POST", "/v1/lists/{list}/ops", access: .writeList) { [self] request, parameters, _ in
            try applyOps(request, parameters)
        }
        router.on("POST", "/v1/lists/{list}/sessions", access: .readList) { [self] in try createSession($0, $1, $2) }
        // Every route on a session (and the event stream, when it comes) is `.session`: its subject is checked.
        router.on("GET", "/v1/sessions/{id}/changes", access: .session) { [self] in try changes($0, $1, $2) }
        router.on("POST", "/v1/sessions/{id}/expand", access: .session) { [self] request, parameters, _ in
            try expand(request, parameters, expanding: true)
        }
        router.on("POST", "/v1/sessions/{id}/collapse", access: .session) { [self] request, parameters, _ in
            try expand(request, parameters, expanding: false)
        }
        router.on("POST", "/v1/sessions/{id}/reset", access: .session) { [self] request, parameters, _ in
            try resetSession(request, parameters)
        }
        router.on("GET", "/v1/sessions/{id}/events", access: .session) { [self] in try events($0, $1, $2) }
        router.on("DELETE", "/v1/sessions/{id}", access: .session) { [self] request, parameters, _ in
            try deleteSession(request, parameters)
        }
    }
}
