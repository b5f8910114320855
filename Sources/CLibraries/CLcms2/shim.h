#include <lcms2.h>

// LittleCMS describes pixel layouts with function-like macros, which Swift cannot import:
// one constant per layout WebImage converts.
static inline cmsUInt32Number webimage_lcms_rgba8_premultiplied(void) { return TYPE_RGBA_8_PREMUL; }
static inline cmsUInt32Number webimage_lcms_rgba8(void) { return TYPE_RGBA_8; }
static inline cmsUInt32Number webimage_lcms_rgb8(void) { return TYPE_RGB_8; }
static inline cmsUInt32Number webimage_lcms_gray8(void) { return TYPE_GRAY_8; }
static inline cmsUInt32Number webimage_lcms_cmyk8(void) { return TYPE_CMYK_8; }
static inline cmsUInt32Number webimage_lcms_cmyk8_inverted(void) { return TYPE_CMYK_8_REV; }
static inline cmsUInt32Number webimage_lcms_rgba16(void) { return TYPE_RGBA_16; }
static inline cmsUInt32Number webimage_lcms_rgb16(void) { return TYPE_RGB_16; }
static inline cmsUInt32Number webimage_lcms_gray16(void) { return TYPE_GRAY_16; }
// RGBA16 whose R = G = B is the grey value: read as grey, G, B and alpha skipped (extra samples).
static inline cmsUInt32Number webimage_lcms_gray_in_rgba16(void) { return COLORSPACE_SH(PT_GRAY) | EXTRA_SH(3) | CHANNELS_SH(1) | BYTES_SH(2); }
