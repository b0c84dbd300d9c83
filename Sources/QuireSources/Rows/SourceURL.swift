/// The connection URL of a source: which forms are accepted, and how it is printed without its password.
public enum SourceURL {
    /// What replaces a password.
    public static let redacted = "<redacted>"

    /// Whether `url` is a libpq connection URI, `postgres://` or `postgresql://` (libpq's `key=value` strings are
    /// refused: the redaction below could not be sure to find their password).
    public static func isAccepted(_ url: String) -> Bool {
        url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")
    }

    /// `url` with the password of its user information (`postgres://user:password@host/db`) and the value of a
    /// `password` query parameter (`?password=…`) replaced by ``redacted``; anything else is kept, so that the
    /// message still names the database. The connections' redaction (``ConnectionURL``), with this placeholder.
    ///
    /// - Complexity: O(*n*) in the length of `url`.
    public static func redactingPassword(of url: String) -> String {
        ConnectionURL(url, placeholder: redacted).redacted
    }
}
