#include <stdio.h>
#include <stdarg.h>
#include <tiffio.h>

// TIFFGetField is variadic, which Swift cannot call: one typed accessor per value shape.
// Each returns 1 when the tag is present (or has a default), 0 otherwise.
static inline int webimage_tiff_u16(TIFF *tif, uint32_t tag, uint16_t *value) {
    return TIFFGetFieldDefaulted(tif, tag, value);
}
static inline int webimage_tiff_u32(TIFF *tif, uint32_t tag, uint32_t *value) {
    return TIFFGetFieldDefaulted(tif, tag, value);
}
// TIFFTAG_ICCPROFILE: a byte count and a pointer into libtiff's directory (valid until the next one).
static inline int webimage_tiff_icc(TIFF *tif, uint32_t *count, void **data) {
    return TIFFGetField(tif, TIFFTAG_ICCPROFILE, count, data);
}
// TIFFTAG_EXTRASAMPLES: how many extra samples and what each is (associated / unassociated alpha).
static inline int webimage_tiff_extra_samples(TIFF *tif, uint16_t *count, uint16_t **types) {
    return TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, count, types);
}
// TIFFTAG_WHITEPOINT: the chromaticity (x, y) of the white CIE L*a*b* samples are relative to.
// Returns 0 when the file has none (TIFF 6.0 has no default; Adobe's Lab note says D50).
static inline int webimage_tiff_white_point(TIFF *tif, float *x, float *y) {
    float *white = NULL;
    if (TIFFGetField(tif, TIFFTAG_WHITEPOINT, &white) != 1 || white == NULL) return 0;
    *x = white[0];
    *y = white[1];
    return 1;
}
