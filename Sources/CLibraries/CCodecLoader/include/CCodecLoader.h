#ifndef WEBIMAGE_CCODECLOADER_H
#define WEBIMAGE_CCODECLOADER_H

/// The AVIF, HEIF and JPEG XL libraries (with their AV1, HEVC and Highway dependencies: about
/// thirty shared objects) are opened on first use rather than at process start. Their functions
/// are defined here as forwarders to the opened library, so the coders call them as usual, after
/// one of these returns NULL. Each returns NULL once the library is open with every function
/// the coder uses, else a message saying what is missing; the first call opens, later calls
/// only read the outcome. Safe from any thread.
const char *webimage_load_avif(void);
const char *webimage_load_heif(void);
const char *webimage_load_jxl(void);

#endif
