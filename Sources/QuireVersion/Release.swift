/// Quire's release, one source for all that name it.
public enum Release {
    /// The release's version (semantic versioning): what `quire --version` prints, the `version` label of
    /// `quire_build_info`, the SDK's `User-Agent`, and the git tag an app pins the package at. It is the newest
    /// release heading of CHANGELOG.md, which a test compares it with: a release changes both in one commit.
    public static let version = "0.1.0"
}
