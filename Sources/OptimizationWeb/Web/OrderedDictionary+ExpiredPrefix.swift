import OrderedCollections

extension OrderedDictionary {
    /// How many leading entries satisfy `isExpired`, for a dictionary kept in expiry order (so
    /// the expired entries are a prefix): a binary search, O(log n). The records of
    /// ``InMemoryReplayLedger``, ``ConsentWithdrawals`` and ``ReplayIssuanceLimit`` remove that
    /// prefix in one `removeFirst(_:)`.
    func expiredPrefixCount(_ isExpired: (Value) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if isExpired(values[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
