import PropertyBased
import Testing

@testable import QuireCore

@Suite("Longest increasing subsequence")
struct SubsequenceTests {
    /// The marked subsequence increases and is as long as the longest one (found the slow way); the
    /// property library shrinks any failing input to a small one.
    @Test func marksALongestIncreasingSubsequence() async {
        await propertyCheck(count: 2_000, input: Gen.int(in: 0...40).array(of: 0...30)) { values in
            let mask = longestIncreasingSubsequenceMask(values)
            let marked = values.indices.filter { mask[$0] }.map { values[$0] }
            #expect(zip(marked, marked.dropFirst()).allSatisfy { $0 < $1 })
            #expect(marked.count == naiveLongestIncreasingLength(values))
        }
    }
}
