import ReplicaFileTree
import Testing

@Suite("Content types")
struct ContentTypeTests {
    @Test(arguments: [
        ("notes.txt", "public.plain-text"),
        ("notes.TEXT", "public.plain-text"),
        ("server.log", "public.log"),
        ("README", "public.plain-text"),
        ("LICENSE", "public.plain-text"),
        ("COPYING", "public.plain-text"),
        ("CHANGELOG", "public.plain-text"),
        ("no-extension", "public.plain-text"),
        ("file.unknownext", "public.plain-text"),
        ("README.md", "net.daringfireball.markdown"),
        ("guide.markdown", "net.daringfireball.markdown"),
        ("index.rst", "org.docutils.restructuredtext"),
        ("index.rest", "org.docutils.restructuredtext"),
        ("page.html", "public.html"),
        ("page.HTM", "public.html"),
        ("page.xhtml", "public.html"),
        ("feed.xml", "public.xml"),
        ("package.json", "public.json"),
        ("ci.yml", "public.yaml"),
        ("config.yaml", "public.yaml"),
        ("table.csv", "public.comma-separated-values-text"),
        ("message.eml", "public.email-message"),
        ("archive.mbox", "com.apple.mail.mbox"),
        ("mbox", "com.apple.mail.mbox"),
        ("main.c", "public.c-source"),
        ("main.h", "public.c-header"),
        ("main.cc", "public.c-plus-plus-source"),
        ("main.cpp", "public.c-plus-plus-source"),
        ("main.cxx", "public.c-plus-plus-source"),
        ("main.hpp", "public.c-plus-plus-source"),
        ("main.swift", "public.swift-source"),
        ("main.m", "public.objective-c-source"),
        ("Main.java", "com.sun.java-source"),
        ("main.rs", "public.rust-source"),
        ("main.go", "public.go-source"),
        ("site.css", "public.css"),
        ("entry.s", "public.assembly-source"),
        ("entry.S", "public.assembly-source"),
        ("Makefile", "public.make-source"),
        ("rules.mk", "public.make-source"),
        ("build.sh", "public.shell-script"),
        ("build.bash", "public.shell-script"),
        (".bashrc", "public.shell-script"),
        ("tool.py", "public.python-script"),
        ("tool.rb", "public.ruby-script"),
        ("tool.pl", "public.perl-script"),
        ("Tool.pm", "public.perl-script"),
        ("app.js", "com.netscape.javascript-source"),
        ("app.mjs", "com.netscape.javascript-source"),
        ("app.ts", "com.netscape.javascript-source"),
        ("index.php", "public.php-script"),
        ("init.lua", "public.lua-script"),
        ("Main.kt", "public.source-code"),
        ("query.sql", "public.source-code"),
        ("board.dts", "public.source-code"),
        ("board.dtsi", "public.source-code"),
        ("Dockerfile", "public.source-code"),
        ("Kconfig", "public.source-code"),
        ("Cargo.toml", "public.plain-text"),
        ("fix.patch", "public.plain-text"),
        (".gitignore", "public.plain-text"),
        ("Documentation/admin-guide/index.rst", "org.docutils.restructuredtext"),
        ("photo.png", "public.png"),
        ("photo.JPG", "public.jpeg"),
        ("anim.gif", "com.compuserve.gif"),
        ("doc.pdf", "com.adobe.pdf"),
        ("bundle.zip", "public.zip-archive"),
        ("src.tar.gz", "org.gnu.gnu-zip-archive"),
        ("lib.so", "public.executable"),
        ("main.o", "public.object-code"),
        ("libx.a", "public.object-code"),
        ("font.ttf", "public.font"),
        ("store.sqlite", "public.database"),
        ("app.jar", "com.sun.java-archive"),
        ("Main.class", "com.sun.java-class"),
        (".DS_Store", "public.data"),
    ])
    func contentTypeByFileName(name: String, expected: String) {
        #expect(TextExtractor.contentType(forFileName: name) == expected)
    }

    @Test(arguments: ["a.txt", "a.md", "a.rst", "a.html", "a.json", "a.swift", "Makefile", "a.log", "a.eml"])
    func documentsCarryTheFileContentType(name: String) throws {
        let document = try onlyDocument(extract(name, "Subject: s\n\nsome text\n"))
        let expected = name.hasSuffix(".eml") ? "public.email-message" : TextExtractor.contentType(forFileName: name)
        #expect(document.contentType == expected)
    }

    @Test(arguments: [
        "x.png", "x.jpg", "x.gif", "x.ico", "x.woff", "x.ttf", "x.pyc", "x.class", "x.jar",
        "x.sqlite", "x.db", "x.gz", "x.zip", "x.exe", "x.mp3", "x.mp4", "x.docx", "x.xlsx",
    ])
    func binaryExtensionsAreSkipped(name: String) throws {
        #expect(try skipReason(extract(name, "text")) == "binary content")
        #expect(TextExtractor.contentType(forFileName: name) != "public.plain-text")
    }

    @Test func unknownExtensionWithTextIsPlainText() throws {
        let document = try onlyDocument(extract("data.weird", "hello"))
        #expect(document.contentType == "public.plain-text")
        #expect(document.text == "hello")
    }

    @Test func defaultLimitsMatchTheDocumentation() {
        let limits = ExtractionLimits()
        #expect(limits.maximumBytes == 16 * 1024 * 1024)
        #expect(limits.maximumTextBytes == 4 * 1024 * 1024)
        #expect(limits.timeLimit == 2.0)
        #expect(limits.maximumMessages == 100_000)
    }
}
