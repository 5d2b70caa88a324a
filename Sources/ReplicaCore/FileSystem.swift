import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Small file-system helpers that keep replica's files private to their owner.
package enum FileSystem {
    /// Creates `path` and its missing parents with mode 0700.
    package static func makeDirectory(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw ReplicaError(
                    .fileSystem, "cannot create the directory \(current): \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ReplicaError(.fileSystem, "\(path) exists but is not a directory")
        }
    }

    /// Creates `path` like ``makeDirectory(_:)`` and, when it already existed with permissions for others
    /// and belongs to this user, takes those permissions away (mode 0700): what is kept in it is private.
    package static func makePrivateDirectory(_ path: String) throws {
        try makeDirectory(path)
        var info = stat()
        guard stat(path, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 != 0 else { return }
        // (On a read-only file system the store says so next, in words of its own.)
        if chmod(path, 0o700) != 0 && errno != EROFS {
            throw ReplicaError(
                .fileSystem,
                "\(path) can be read by other users and its permissions could not be set to 0700: "
                    + "\(String(cString: strerror(errno))); run 'chmod 700 \(path)'")
        }
    }

    /// Removes `path` and everything under it, without following symbolic links. A missing path is fine.
    package static func removeTree(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw ReplicaError(.fileSystem, "cannot inspect \(path): \(String(cString: strerror(errno)))")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            for name in try entries(of: path) { try removeTree(path + "/" + name) }
            if rmdir(path) != 0 && errno != ENOENT {
                throw ReplicaError(
                    .fileSystem, "cannot remove the directory \(path): \(String(cString: strerror(errno)))")
            }
        } else {
            CrashPoints.reach("fileSystem.remove")
            if unlink(path) != 0 && errno != ENOENT {
                throw ReplicaError(.fileSystem, "cannot remove \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The names in a directory, without `.` and `..`, sorted.
    package static func entries(of path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return [] }
            throw ReplicaError(.fileSystem, "cannot read the directory \(path): \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Whether `path` lies on a file system mounted read-only.
    package static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && (info.f_flag & UInt(ST_RDONLY)) != 0
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The directory replica keeps data in when no `--store` is given: `$XDG_DATA_HOME/replica`, or
    /// `~/.local/share/replica` ([XDG base directories](https://specifications.freedesktop.org/basedir-spec/latest/)).
    package static func defaultDataDirectory(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/replica" }
        return home(environment) + "/.local/share/replica"
    }

    /// `$XDG_CONFIG_HOME/replica`, or `~/.config/replica`.
    package static func defaultConfigDirectory(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/replica" }
        return home(environment) + "/.config/replica"
    }

    private static func home(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        return "/tmp"
    }
}
