#include <zlib.h>

// inflateInit is a macro (it passes the library's version and the stream's size): a function for Swift.
static inline int webimage_inflate_init(z_stream *stream) { return inflateInit(stream); }
