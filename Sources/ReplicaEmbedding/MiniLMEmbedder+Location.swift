public import Foundation
import ReplicaCore

extension MiniLMEmbedder {
    /// The error when no model is found, saying how to install one.
    static let notInstalled = ReplicaError(
        .invalidConfiguration,
        "the embedding model is not installed (run scripts/setup-model.sh, or set REPLICA_MODEL_DIR to a folder with all-MiniLM-L6-v2's model.safetensors and vocab.txt)"
    )

    /// The folder the model is loaded from when none is given, as ``locateDirectory(environment:)`` finds it; `nil`
    /// when there is none, semantic search is turned off, or `REPLICA_MODEL_DIR` names a folder that
    /// cannot be used.
    public static var defaultDirectory: URL? { try? locateDirectory() }

    /// The folder the model is loaded from when none is given: the one `REPLICA_MODEL_DIR` names, and
    /// only it; without it (or set empty), the first of `$XDG_DATA_HOME/replica/models/all-MiniLM-L6-v2`
    /// (`~/.local/share/replica/models/…`) and `/usr/local/share/replica/models/all-MiniLM-L6-v2` that
    /// holds `model.safetensors`. `REPLICA_MODEL_DIR=off` turns semantic search off.
    ///
    /// A folder `REPLICA_MODEL_DIR` names is never replaced by the installed model: vectors made by
    /// another model than the one asked for would pass for its. When the folder does not exist, is not
    /// a folder, lacks `model.safetensors` or `vocab.txt`, or has one that is a loop of symbolic links,
    /// a link to nothing or not a regular file, the error names the folder and says which.
    ///
    /// For example:
    /// ```swift
    /// let folder = try MiniLMEmbedder.locateDirectory()   // throws when there is no model to load
    /// let embedder = try MiniLMEmbedder(directory: folder)
    /// ```
    ///
    /// - Parameter environment: where `REPLICA_MODEL_DIR`, `XDG_DATA_HOME` and `HOME` are read.
    /// - Returns: The model's folder (its files may still be damaged: loading says so).
    /// - Throws: ``ReplicaError`` with code `invalidConfiguration` when semantic search is off, the
    ///   named folder cannot be used, or no model is installed.
    public static func locateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> URL
    {
        switch environment["REPLICA_MODEL_DIR"] {
        case "off":
            throw ReplicaError(.invalidConfiguration, "semantic search is turned off (REPLICA_MODEL_DIR=off)")
        case let named? where !named.isEmpty:
            if let problem = problem(with: named) {
                throw ReplicaError(
                    .invalidConfiguration,
                    "REPLICA_MODEL_DIR names \(named), which \(problem); no other model is used in its place "
                        + "(unset REPLICA_MODEL_DIR to use the installed one)")
            }
            return URL(fileURLWithPath: named)
        default:
            let installed = [
                FileSystem.defaultDataDirectory(environment: environment) + "/models/all-MiniLM-L6-v2",
                "/usr/local/share/replica/models/all-MiniLM-L6-v2",
            ]
            guard
                let found = installed.first(where: { FileManager.default.fileExists(atPath: $0 + "/model.safetensors") }
                )
            else {
                throw notInstalled
            }
            return URL(fileURLWithPath: found)
        }
    }

    /// What keeps `folder` from holding a model, as the end of "… names FOLDER, which …"; `nil` when
    /// both files are there as regular files (through links). Only looked at, never opened.
    static func problem(with folder: String) -> String? {
        var info = stat()
        guard stat(folder, &info) == 0 else {
            return errno == ENOENT ? "does not exist" : "cannot be looked at (\(String(cString: strerror(errno))))"
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "is not a folder" }
        for name in ["model.safetensors", "vocab.txt"] {
            let path = folder + "/" + name
            if stat(path, &info) != 0 {
                switch errno {
                case ENOENT:
                    return lstat(path, &info) == 0
                        ? "has a \(name) that is a symbolic link to nothing" : "has no \(name)"
                case ELOOP: return "has a \(name) that is a loop of symbolic links"
                default: return "has a \(name) that cannot be looked at (\(String(cString: strerror(errno))))"
                }
            }
            guard info.st_mode & S_IFMT == S_IFREG else { return "has a \(name) that is not a regular file" }
        }
        return nil
    }
}
