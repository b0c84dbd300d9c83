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
    /// message still names the database.
    ///
    /// - Complexity: O(*n*) in the length of `url`.
    public static func redactingPassword(of url: String) -> String {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return url }
        var text = url
        let authority = url[url.index(colon, offsetBy: 3)...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            text = String(url[..<url.index(after: colon)]) + redacted + url[at...]
        }
        guard let question = text.firstIndex(of: "?") else { return text }
        let query = text[text.index(after: question)...]
        let parameters = query.split(separator: "&", omittingEmptySubsequences: false).map { parameter in
            let name = parameter.prefix { $0 != "=" }
            return name.lowercased() == "password" && name.count < parameter.count
                ? "\(name)=\(redacted)" : String(parameter)
        }
        return String(text[...question]) + parameters.joined(separator: "&")
    }
}
