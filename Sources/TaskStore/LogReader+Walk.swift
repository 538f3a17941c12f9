@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

extension LogReader {
    /// Visits the commits of `replica` after `start` in sequence order, a run of commits that
    /// follow on one another at a time (applying a run extends the version vector once);
    /// `visit` returns false to stop. The folder is listed again, up to ``Walk/attempts``
    /// times, when its files change while they are read.
    func forEachCommit(
        of replica: ReplicaID, after start: UInt64, through maxSeq: UInt64, outcome: inout Outcome,
        tail mark: inout TailMark?, previous: ((Commit) -> Void)? = nil, decodingAhead: Bool = false,
        _ visit: (ArraySlice<Commit>) -> Bool
    ) throws(StoreError) {
        var walk = Walk(
            dir: layout.logDirectory(replica), replica: replica, start: start, maxSeq: maxSeq, decodingAhead: decodingAhead,
            previous: previous)
        for attempt in 0..<Walk.attempts {
            walk.begin(attempt: attempt)
            try walk.readSealed(try Posix.list(walk.dir), visit)
            if !walk.raced && !walk.stopped && walk.have < maxSeq {
                try walk.readTail(layout.tailFile(replica), mark: &mark, visit)
            }
            if !walk.raced || walk.isLastAttempt {
                walk.noteMissingIfRaced()
                outcome.warnings += walk.warnings
                if walk.visitedPartOfDamagedRecord { outcome.appliedPartOfDamagedRecord = true }
                return
            }
        }
    }

    /// One reader's pass over a replica's log folder: the sealed segments in order, then the
    /// tail. A pass that finds the files changing under it is marked ``raced``; the reader then
    /// lists the folder again.
    struct Walk {
        static let attempts = 4

        let dir: String
        let replica: ReplicaID
        let start: UInt64
        let maxSeq: UInt64
        let decodingAhead: Bool
        let previous: ((Commit) -> Void)?
        /// The last sequence number visited (or held before the walk).
        private(set) var have: UInt64
        private var wantsPrevious: Bool
        private(set) var visitedPartOfDamagedRecord = false

        // What the current attempt found.
        private var attempt = 0
        private(set) var raced = false
        private(set) var stopped = false
        /// The length of the tail as read, if it read clean to its end.
        private var tailReadClean: Int?
        private(set) var warnings: [StoreWarning] = []

        init(
            dir: String, replica: ReplicaID, start: UInt64, maxSeq: UInt64, decodingAhead: Bool, previous: ((Commit) -> Void)?
        ) {
            self.dir = dir
            self.replica = replica
            self.start = start
            self.maxSeq = maxSeq
            self.decodingAhead = decodingAhead
            self.previous = previous
            have = start
            wantsPrevious = previous != nil && start > 0
        }

        var isLastAttempt: Bool { attempt == Self.attempts - 1 }

        mutating func begin(attempt: Int) {
            self.attempt = attempt
            raced = false
            stopped = false
            tailReadClean = nil
            warnings = []
        }

        /// Reads the sealed segments among `names` in reading order, from the first one past
        /// what is held, until one is missing or the visit stops.
        mutating func readSealed(_ names: [String], _ visit: (ArraySlice<Commit>) -> Bool) throws(StoreError) {
            var sealed: [SealedName] = []
            for n in names where !n.hasPrefix(".") {
                if let s = SealedName(fileName: n) {
                    sealed.append(s)
                } else if n != StoreLayout.tailName && !n.hasPrefix(StoreLayout.tailName + ".damaged") {
                    warnings.append(StoreWarning(path: Posix.join(dir, n), message: "not a segment file name; ignored"))
                }
            }
            for s in sealed.sorted(by: SealedName.readingOrder) where !stopped {
                if s.last <= have || have >= maxSeq { continue }
                if s.first > have + 1 {
                    if isLastAttempt {
                        warnings.append(StoreWarning(
                            path: dir, message: "operations \(have + 1)...\(s.first - 1) are missing (no segment holds them); later ones cannot be applied until they are synced"))
                    }
                    raced = true
                    return
                }
                if try !read(Posix.join(dir, s.fileName), kind: .sealed, first: s.first, visit) {
                    raced = true
                    return
                }
            }
        }

        /// Reads the tail unless it is the file `mark` describes, and leaves in `mark` what
        /// it read whole and clean (nil otherwise).
        mutating func readTail(_ path: String, mark: inout TailMark?, _ visit: (ArraySlice<Commit>) -> Bool) throws(StoreError) {
            let now = TailMark(path: path)
            guard now == nil || now != mark else { return }
            _ = try read(path, kind: .tail, first: nil, visit)
            // Remembered only when the whole file as stat'ed was read clean: a tail read as
            // torn may be a writer's reserved space (its size says nothing of what is appended
            // next), and a writer giving space back shrinks the file, so a size seen before the
            // read may come back holding more.
            mark = raced || stopped || tailReadClean != now.map({ Int($0.size) }) ? nil : now
        }

        mutating func noteMissingIfRaced() {
            guard raced, !warnings.contains(where: { $0.path == dir }) else { return }
            warnings.append(StoreWarning(
                path: dir, message: "operations after \(have) are missing: the files changed while being read, or a segment is missing"))
        }

        private func matches(_ header: SegmentHeader, kind: SegmentHeader.Kind, first: UInt64?) -> Bool {
            header.replica == replica.bytes && header.kind == kind && (first.map { $0 == header.firstSeq } ?? true)
        }

        /// Reads one file; false if it vanished.
        private mutating func read(
            _ path: String, kind: SegmentHeader.Kind, first: UInt64?, _ visit: (ArraySlice<Commit>) -> Bool
        ) throws(StoreError) -> Bool {
            guard let bytes = try Posix.readFile(path) else { return false }
            let streamed: SegmentCodec.Streamed
            do {
                // Records this reader already holds are checked but not decoded.
                let skip = wantsPrevious && have == start ? start - 1 : have
                let held = have
                streamed = try SegmentCodec.stream(
                    bytes, skipThrough: skip, needsLatestTime: false,
                    accept: { matches($0, kind: kind, first: first) && !(kind == .tail && $0.firstSeq > held + 1) },
                    decodingAhead: decodingAhead && bytes.count >= LogReader.decodingAheadMinimumBytes
                ) { commits in take(commits, from: path, visit) }
            } catch {
                warnings.append(StoreWarning(path: path, message: "\(error); file skipped"))
                return true
            }
            judge(streamed, path: path, kind: kind, first: first, length: bytes.count)
            return true
        }

        /// Notes what reading a file found besides its commits: a foreign header, a tail sealed
        /// meanwhile, damage.
        private mutating func judge(_ streamed: SegmentCodec.Streamed, path: String, kind: SegmentHeader.Kind, first: UInt64?, length: Int) {
            let contents = streamed.contents
            guard matches(contents.header, kind: kind, first: first) else {
                warnings.append(StoreWarning(path: path, message: "header does not match the file's name or folder; file skipped"))
                return
            }
            guard streamed.accepted else {
                raced = true  // a tail sealed between listing and reading: list again
                return
            }
            if streamed.visitedPartOfDamagedRecord { visitedPartOfDamagedRecord = true }
            if kind == .tail, contents.scan.ending == .clean { tailReadClean = length }
            guard let d = contents.damage else { return }
            // A writer copying records into its tail through memory can be caught mid-copy:
            // read again before calling it damage.
            if kind == .tail && !isLastAttempt {
                raced = true
                return
            }
            warnings.append(StoreWarning(
                path: path, message: "damaged record at byte \(d.offset): \(d.reason); operations after it in this file were not read"))
        }

        /// Visits the commits of `commits` past what is held, in runs that follow on one
        /// another; false once the walk stops (a gap, the limit, or the visitor).
        private mutating func take(_ commits: ArraySlice<Commit>, from path: String, _ visit: (ArraySlice<Commit>) -> Bool) -> Bool {
            if wantsPrevious && have == start, let p = commits.first(where: { $0.endSeq - 1 == start }) {
                previous?(p)
                wantsPrevious = false
            }
            var i = commits.startIndex
            while i < commits.endIndex {
                let c = commits[i]
                if c.endSeq - 1 <= have {
                    i += 1
                    continue
                }
                if c.firstSeq != have + 1 {
                    warnings.append(StoreWarning(
                        path: path, message: "a commit at \(c.firstSeq)...\(c.endSeq - 1) overlaps the operations up to \(have) without lining up; later operations of this replica were not applied"))
                }
                guard c.endSeq - 1 <= maxSeq, c.firstSeq == have + 1 else {
                    stopped = true
                    return false
                }
                let end = runEnd(commits, from: i)
                guard visit(commits[i..<end]) else {
                    stopped = true
                    return false
                }
                have = commits[end - 1].endSeq - 1
                i = end
            }
            return true
        }

        /// The end of the run of commits from `i` that follow on one another within the limit.
        private func runEnd(_ commits: ArraySlice<Commit>, from i: Int) -> Int {
            var end = i + 1
            var through = commits[i].endSeq - 1
            while end < commits.endIndex, commits[end].firstSeq == through + 1, commits[end].endSeq - 1 <= maxSeq {
                through = commits[end].endSeq - 1
                end += 1
            }
            return end
        }
    }
}
