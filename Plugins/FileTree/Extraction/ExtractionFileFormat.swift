/// How a file is read, decided from its name alone.
///
/// Pairs the uniform type identifier reported for the file with the reader that handles it.
/// Unknown extensions are plain text; the bytes decide later whether they really are text.
struct ExtractionFileFormat: Sendable, Equatable {
    /// The reader for a kind of file.
    enum Reader: Sendable, Equatable {
        case plainText
        case markdown
        case restructuredText
        case html
        case email
        case mbox
        case binary
    }

    /// The uniform type identifier reported for the file.
    let contentType: String
    /// The reader that extracts the file.
    let reader: Reader

    /// The format of a file name; a path is reduced to its last component.
    init(fileName: String) {
        var name = Substring(fileName)
        if let slash = name.lastIndex(of: "/") { name = name[name.index(after: slash)...] }
        if let known = Self.byName[String(name)] {
            self = known
            return
        }
        // ".profile" has no extension; "archive.tar.gz" has "gz".
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            let ext = name[name.index(after: dot)...].lowercased()
            self = Self.byExtension[ext] ?? Self(contentType: Self.plain, reader: .plainText)
            return
        }
        // Dotfiles: ".bashrc" by name, ".gitignore" or ".DS_Store" by what follows the dot.
        if name.hasPrefix(".") {
            let base = name.dropFirst().lowercased()
            self =
                Self.byName[base] ?? Self.byExtension[base]
                ?? Self(contentType: Self.plain, reader: .plainText)
            return
        }
        self = Self(contentType: Self.plain, reader: .plainText)
    }

    private init(contentType: String, reader: Reader) {
        self.contentType = contentType
        self.reader = reader
    }

    private static let plain = "public.plain-text"
    private static let source = "public.source-code"
    private static let shell = "public.shell-script"
    private static let make = "public.make-source"

    /// Well-known file names without a (meaningful) extension.
    private static let byName: [String: ExtractionFileFormat] = {
        var table: [String: ExtractionFileFormat] = [:]
        for name in [
            "README", "LICENSE", "LICENCE", "COPYING", "CHANGELOG", "CHANGES", "NEWS",
            "AUTHORS", "CONTRIBUTORS", "CREDITS", "MAINTAINERS", "INSTALL", "TODO",
            "NOTICE", "HISTORY", "THANKS", "BUGS", "VERSION",
        ] {
            table[name] = Self(contentType: plain, reader: .plainText)
        }
        for name in ["Makefile", "makefile", "GNUmakefile", "Kbuild", "Makefile.am", "Makefile.in"] {
            table[name] = Self(contentType: make, reader: .plainText)
        }
        for name in [
            "Dockerfile", "Containerfile", "Kconfig", "Jenkinsfile", "Vagrantfile",
            "Gemfile", "Rakefile", "Podfile", "Brewfile", "CMakeLists.txt", "meson.build",
            "BUILD", "WORKSPACE",
        ] {
            table[name] = Self(contentType: source, reader: .plainText)
        }
        for name in ["bashrc", "bash_profile", "profile", "zshrc", "zprofile", "kshrc"] {
            table[name] = Self(contentType: shell, reader: .plainText)
        }
        table["mbox"] = Self(contentType: "com.apple.mail.mbox", reader: .mbox)
        return table
    }()

    /// Formats by lowercased extension.
    private static let byExtension: [String: ExtractionFileFormat] = {
        var table: [String: ExtractionFileFormat] = [:]
        func add(_ type: String, _ reader: Reader, _ extensions: [String]) {
            for ext in extensions { table[ext] = Self(contentType: type, reader: reader) }
        }
        // Text documents.
        add(plain, .plainText, ["txt", "text"])
        add("public.log", .plainText, ["log"])
        add("net.daringfireball.markdown", .markdown, ["md", "markdown", "mdown", "mkd"])
        add("org.docutils.restructuredtext", .restructuredText, ["rst", "rest"])
        add("public.html", .html, ["html", "htm", "xhtml", "shtml"])
        add("public.xml", .plainText, ["xml", "xsd", "xsl", "xslt", "plist", "rss", "atom"])
        add("public.svg-image", .plainText, ["svg"])
        add("public.json", .plainText, ["json", "jsonl", "ndjson", "geojson"])
        add("public.yaml", .plainText, ["yaml", "yml"])
        add("public.comma-separated-values-text", .plainText, ["csv"])
        add("public.tab-separated-values-text", .plainText, ["tsv"])
        add("public.email-message", .email, ["eml"])
        add("com.apple.mail.mbox", .mbox, ["mbox", "mbx"])
        add("public.rtf", .plainText, ["rtf"])
        // Source code with a specific type.
        add("public.c-source", .plainText, ["c"])
        add("public.c-header", .plainText, ["h"])
        add("public.c-plus-plus-source", .plainText, ["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx"])
        add("public.swift-source", .plainText, ["swift"])
        add("public.objective-c-source", .plainText, ["m"])
        add("public.objective-c-plus-plus-source", .plainText, ["mm"])
        add("com.sun.java-source", .plainText, ["java"])
        add("public.rust-source", .plainText, ["rs"])
        add("public.go-source", .plainText, ["go"])
        add("public.css", .plainText, ["css"])
        add("public.assembly-source", .plainText, ["s", "asm"])
        add(make, .plainText, ["mk", "mak", "make"])
        add(shell, .plainText, ["sh", "bash", "zsh", "ksh", "csh", "fish"])
        add("public.python-script", .plainText, ["py", "pyw", "pyi"])
        add("public.ruby-script", .plainText, ["rb"])
        add("public.perl-script", .plainText, ["pl", "pm"])
        add("com.netscape.javascript-source", .plainText, ["js", "mjs", "cjs", "ts", "jsx", "tsx"])
        add("public.php-script", .plainText, ["php"])
        add("public.lua-script", .plainText, ["lua"])
        // Other source code and configuration.
        add(
            source, .plainText,
            [
                "kt", "kts", "scala", "cs", "fs", "vb", "dart", "zig", "nim", "hs", "ml", "mli", "ex",
                "exs", "erl", "clj", "lisp", "scm", "el", "vim", "r", "jl", "f", "f90", "pas", "d",
                "sql", "tex", "sty", "cls", "bib", "dts", "dtsi", "awk", "sed", "tcl", "cmake",
                "gradle", "proto", "thrift", "graphql", "vue", "svelte", "scss", "sass", "less",
                "bat", "cmd", "ps1", "y", "l", "lds", "cocci", "bpf",
            ])
        add(
            plain, .plainText,
            [
                "toml", "ini", "cfg", "conf", "config", "properties", "env", "patch", "diff", "po",
                "pot", "gitignore", "gitattributes", "editorconfig", "gitmodules", "mailmap", "adoc",
                "asciidoc", "org", "textile", "man", "1", "2", "3", "4", "5", "6", "7", "8", "rules",
                "readme", "cocciconfig", "clang-format", "lock",
            ])
        // Binary files, skipped without reading.
        add("public.png", .binary, ["png"])
        add("public.jpeg", .binary, ["jpg", "jpeg", "jpe"])
        add("com.compuserve.gif", .binary, ["gif"])
        add("public.tiff", .binary, ["tif", "tiff"])
        add("com.microsoft.bmp", .binary, ["bmp"])
        add("com.microsoft.ico", .binary, ["ico", "cur"])
        add(
            "public.image", .binary,
            [
                "webp", "heic", "heif", "icns", "psd", "avif", "jxl", "xcf",
                "raw", "cr2", "nef", "dng", "eps", "svgz", "tga", "pbm",
                "pgm", "ppm",
            ])
        add("public.mp3", .binary, ["mp3"])
        add(
            "public.audio", .binary,
            [
                "wav", "flac", "ogg", "oga", "opus", "m4a", "aac", "aif",
                "aiff", "mid", "midi", "wma", "caf",
            ])
        add("public.mpeg-4", .binary, ["mp4", "m4v"])
        add("com.apple.quicktime-movie", .binary, ["mov"])
        add(
            "public.movie", .binary,
            [
                "avi", "mkv", "webm", "wmv", "flv", "mpg", "mpeg", "3gp",
                "ogv",
            ])
        add("com.adobe.pdf", .binary, ["pdf"])
        add("public.zip-archive", .binary, ["zip"])
        add("org.gnu.gnu-zip-archive", .binary, ["gz", "tgz"])
        add("public.tar-archive", .binary, ["tar"])
        add("public.bzip2-archive", .binary, ["bz2", "tbz", "tbz2"])
        add(
            "public.archive", .binary,
            [
                "xz", "txz", "zst", "lz", "lz4", "lzma", "7z", "rar",
                "cpio", "iso", "dmg", "deb", "rpm", "apk", "cab", "whl",
                "egg", "xpi", "crx", "ipa", "pkg", "msi", "z",
            ])
        add("com.sun.java-archive", .binary, ["jar", "war", "ear", "aar"])
        add("com.sun.java-class", .binary, ["class"])
        add("com.microsoft.word.doc", .binary, ["doc"])
        add("org.openxmlformats.wordprocessingml.document", .binary, ["docx"])
        add("com.microsoft.excel.xls", .binary, ["xls"])
        add("org.openxmlformats.spreadsheetml.sheet", .binary, ["xlsx"])
        add("com.microsoft.powerpoint.ppt", .binary, ["ppt"])
        add("org.openxmlformats.presentationml.presentation", .binary, ["pptx"])
        add(
            "org.oasis-open.opendocument", .binary,
            [
                "odt", "ods", "odp", "odg", "pages",
                "numbers", "epub",
            ])
        add(
            "public.executable", .binary,
            [
                "exe", "dll", "so", "dylib", "bin", "elf", "ko",
                "wasm", "efi", "dtb", "dtbo",
            ])
        add(
            "public.object-code", .binary,
            [
                "o", "obj", "a", "lib", "pyc", "pyo", "pyd",
                "swiftmodule", "swiftdoc", "pcm", "pch", "gch",
                "beam", "elc", "rlib",
            ])
        add("public.font", .binary, ["woff", "woff2", "ttf", "otf", "eot", "ttc", "pfb"])
        add(
            "public.database", .binary,
            [
                "sqlite", "sqlite3", "db", "mdb", "accdb", "realm",
                "sqlite-wal", "sqlite-shm", "db-wal", "db-shm",
            ])
        add(
            "public.data", .binary,
            [
                "dat", "img", "vmdk", "qcow2", "vdi", "npy", "npz", "pkl",
                "pickle", "parquet", "avro", "onnx", "pt", "pth", "h5",
                "hdf5", "tflite", "mlmodel", "safetensors", "gguf",
                "p12", "pfx", "der", "jks", "keystore", "ds_store",
                "swp", "swo", "pack", "idx",
            ])
        return table
    }()
}
