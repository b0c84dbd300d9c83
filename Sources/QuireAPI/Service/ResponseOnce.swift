import QuireCore
import QuireHTTP

/// The response of a suspended connection (a ``PendingResponse``), given once by the thread that made it and
/// waited for by a shutdown that comes first: a write still running when the service stops is answered with its
/// own outcome, neither lost nor answered as refused.
typealias ResponseOnce = GivenOnce<Response>
