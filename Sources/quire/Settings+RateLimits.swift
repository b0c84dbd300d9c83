import Configuration
import QuireAPI

extension Settings {
    /// The `rateLimits.*` keys with their defaults (``RateLimitSettings``), in the order of config/quire.yaml.
    static var rateLimitKeys: [(key: String, value: ConfigContent)] {
        let limits = RateLimitSettings()
        var keys: [(key: String, value: ConfigContent)] = [
            ("rateLimits.enabled", .bool(limits.enabled)),
            ("rateLimits.clients", .int(limits.clients)),
        ]
        for kind in RateLimitKind.allCases {
            keys.append(("rateLimits.\(kind.name).perSecond", .int(limits[kind].perSecond)))
            keys.append(("rateLimits.\(kind.name).burst", .int(limits[kind].burst)))
        }
        return keys
    }

    /// Reads and checks `rateLimits.*` (API.md §6c).
    ///
    /// - Throws: ``SettingsError`` naming the key out of range.
    static func rateLimits(_ config: ConfigReader) throws -> RateLimitSettings {
        var limits = RateLimitSettings()
        limits.enabled = try config.requiredBool(forKey: "rateLimits.enabled")
        limits.clients = try config.requiredInt(forKey: "rateLimits.clients")
        guard (1...100_000_000).contains(limits.clients) else {
            throw SettingsError("rateLimits.clients must be from 1 to 100000000, not \(limits.clients)")
        }
        for kind in RateLimitKind.allCases {
            let prefix = "rateLimits.\(kind.name)"
            let rate = BucketRate(
                perSecond: try config.requiredInt(forKey: ConfigKey("\(prefix).perSecond")),
                burst: try config.requiredInt(forKey: ConfigKey("\(prefix).burst")))
            guard rate.perSecond >= 1 else { throw SettingsError("\(prefix).perSecond must be at least 1") }
            guard rate.burst >= 1 else { throw SettingsError("\(prefix).burst must be at least 1") }
            limits[kind] = rate
        }
        return limits
    }
}
