/// The list names a listing covers (`GET /v1/lists`): those that start with one of some prefixes and those
/// that are one of some names. A token's `read:` patterns make one (`read:inbox-*` a prefix, `read:news` a
/// name), narrowed to a request's `prefix` with ``narrowed(toPrefix:)``.
///
/// It is kept as ``ranges``: ranges of names in byte order (of their UTF-8, as both stores compare names),
/// disjoint and sorted, so that the selected lists in name order are those of each range in turn. A store
/// reads a page range by range, each with a seek of its index on names, and never scans a name the selection
/// leaves out: a token that reads a few lists among millions costs a few seeks.
public struct ListSelection: Sendable, Equatable {
    /// The prefixes, none of which starts with another, in byte order.
    public let prefixes: [String]
    /// The names that no prefix covers, in byte order.
    public let names: [String]
    /// The ranges of names covered, disjoint, in byte order: one per prefix and per name.
    public let ranges: [ListNameRange]

    /// Every list.
    public static let all = ListSelection(prefixes: [""], names: [])

    /// No list.
    public static let empty = ListSelection(prefixes: [], names: [])

    /// The names that start with one of `prefixes` (`""`: every name) or are one of `names`.
    ///
    /// - Complexity: O(*p* log *p* + *n* log *n* + *n* · *p*) for *p* prefixes and *n* names.
    public init(prefixes: some Sequence<String>, names: some Sequence<String>) {
        // In byte order, a prefix that starts with another comes after it with only such prefixes between
        // them: comparing each with the last one kept drops them all.
        var kept: [String] = []
        for prefix in Set(prefixes).sorted(by: ListNameRange.precedes) {
            if let last = kept.last, prefix.utf8.starts(with: last.utf8) { continue }
            kept.append(prefix)
        }
        self.prefixes = kept
        self.names = Set(names).filter { name in !kept.contains { name.utf8.starts(with: $0.utf8) } }
            .sorted(by: ListNameRange.precedes)
        // A name that no prefix covers lies wholly before or after each prefix's range: ordering the ranges by
        // their first names orders them.
        ranges = (kept.map(ListNameRange.prefix) + self.names.map(ListNameRange.name)).sorted {
            ListNameRange.precedes($0.lower ?? "", $1.lower ?? "")
        }
    }

    /// Whether the selection covers no name.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The names of this selection that also start with `prefix`.
    ///
    /// - Complexity: as ``init(prefixes:names:)``.
    public func narrowed(toPrefix prefix: String) -> ListSelection {
        guard !prefix.isEmpty else { return self }
        // A prefix of ours that starts with `prefix` stays; one that `prefix` starts with becomes `prefix`.
        let prefixes = prefixes.compactMap { own -> String? in
            if own.utf8.starts(with: prefix.utf8) { return own }
            if prefix.utf8.starts(with: own.utf8) { return prefix }
            return nil
        }
        return ListSelection(prefixes: prefixes, names: names.filter { $0.utf8.starts(with: prefix.utf8) })
    }

    /// Whether the selection covers `name`.
    ///
    /// - Complexity: O(*r*) for *r* ranges.
    public func contains(_ name: String) -> Bool {
        ranges.contains { $0.contains(name) }
    }

    /// The ranges of names after `name` (all of them when `nil`), each cut to start after it, in order: where
    /// a page that follows `name` is read.
    ///
    /// - Complexity: O(*r*) for *r* ranges.
    public func ranges(after name: String?) -> [ListNameRange] {
        guard let name else { return ranges }
        return ranges.compactMap { $0.after(name) }
    }
}

/// A range of list names in byte order (of their UTF-8): the names that start with a prefix, one name, or
/// what is left of either after a name. A store reads it as `lower <(=) name <(=) upper`.
public struct ListNameRange: Sendable, Equatable {
    /// The range's lower bound; `nil` for none.
    public let lower: String?
    /// Whether `lower` itself is in the range.
    public let includesLower: Bool
    /// The range's upper bound; `nil` for none.
    public let upper: String?
    /// Whether `upper` itself is in the range.
    public let includesUpper: Bool

    public init(lower: String?, includesLower: Bool, upper: String?, includesUpper: Bool) {
        self.lower = lower
        self.includesLower = includesLower
        self.upper = upper
        self.includesUpper = includesUpper
    }

    /// The names that start with `prefix`: from `prefix` itself, up to (not including) the least string
    /// above all of them (``successor(of:)``).
    public static func prefix(_ prefix: String) -> ListNameRange {
        guard !prefix.isEmpty else {
            return ListNameRange(lower: nil, includesLower: true, upper: nil, includesUpper: false)
        }
        return ListNameRange(lower: prefix, includesLower: true, upper: successor(of: prefix), includesUpper: false)
    }

    /// The one name `name`.
    public static func name(_ name: String) -> ListNameRange {
        ListNameRange(lower: name, includesLower: true, upper: name, includesUpper: true)
    }

    /// Whether `name` is in the range.
    public func contains(_ name: String) -> Bool {
        if let lower, includesLower ? Self.precedes(name, lower) : !Self.precedes(lower, name) { return false }
        if let upper, includesUpper ? Self.precedes(upper, name) : !Self.precedes(name, upper) { return false }
        return true
    }

    /// The names of the range that come after `name`, or `nil` when none can.
    func after(_ name: String) -> ListNameRange? {
        if let upper, !Self.precedes(name, upper) { return nil }
        if let lower, Self.precedes(name, lower) { return self }
        return ListNameRange(lower: name, includesLower: false, upper: upper, includesUpper: includesUpper)
    }

    /// Whether `a` comes before `b` in byte order of their UTF-8 (which is the order of their code points):
    /// the order of list names everywhere.
    public static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The least string that comes after every string starting with `prefix`: `prefix` with its last code
    /// point raised by one (a last code point that cannot be raised is dropped and the one before it raised);
    /// `nil` when there is none (`prefix` is empty, or all U+10FFFF).
    ///
    /// Every string from `prefix` up to (not including) it starts with `prefix`.
    public static func successor(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            let next = last.value == 0xD7FF ? 0xE000 : last.value + 1  // over the surrogates, no scalars
            if let raised = Unicode.Scalar(next) {
                scalars.append(raised)
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars)
                return String(view)
            }
        }
        return nil
    }
}
