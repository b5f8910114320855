// libavif, opened on first use (see include/CCodecLoader.h).
#include <avif/avif.h>
#include "lazy.h"

#define AVIF_FUNCTIONS(F, V)                                                                       \
    F(avifDecoder *, avifDecoderCreate, (void), ())                                               \
    V(avifDecoderDestroy, (avifDecoder *decoder), (decoder))                                      \
    F(avifResult, avifDecoderNextImage, (avifDecoder *decoder), (decoder))                        \
    F(avifResult, avifDecoderNthImage, (avifDecoder *decoder, uint32_t frameIndex), (decoder, frameIndex)) \
    F(avifResult, avifDecoderNthImageTiming,                                                      \
      (const avifDecoder *decoder, uint32_t frameIndex, avifImageTiming *outTiming),              \
      (decoder, frameIndex, outTiming))                                                           \
    F(avifResult, avifDecoderParse, (avifDecoder *decoder), (decoder))                            \
    F(avifResult, avifDecoderSetIOMemory, (avifDecoder *decoder, const uint8_t *data, size_t size), (decoder, data, size)) \
    F(avifResult, avifEncoderAddImage,                                                            \
      (avifEncoder *encoder, const avifImage *image, uint64_t duration, avifAddImageFlags flags), \
      (encoder, image, duration, flags))                                                          \
    F(avifEncoder *, avifEncoderCreate, (void), ())                                               \
    V(avifEncoderDestroy, (avifEncoder *encoder), (encoder))                                      \
    F(avifResult, avifEncoderFinish, (avifEncoder *encoder, avifRWData *output), (encoder, output)) \
    F(avifImage *, avifImageCreate, (uint32_t width, uint32_t height, uint32_t depth, avifPixelFormat format), \
      (width, height, depth, format))                                                             \
    V(avifImageDestroy, (avifImage *image), (image))                                              \
    V(avifImageSetProfileICC, (avifImage *image, const uint8_t *icc, size_t iccSize), (image, icc, iccSize)) \
    F(avifResult, avifImageRGBToYUV, (avifImage *image, const avifRGBImage *rgb), (image, rgb))    \
    F(avifResult, avifImageYUVToRGB, (const avifImage *image, avifRGBImage *rgb), (image, rgb))    \
    V(avifRGBImageSetDefaults, (avifRGBImage *rgb, const avifImage *image), (rgb, image))         \
    V(avifRWDataFree, (avifRWData *raw), (raw))                                                   \
    F(const char *, avifResultToString, (avifResult result), (result))

WEBIMAGE_LAZY_LIBRARY(avif, AVIF_FUNCTIONS, "libavif15", "libavif.so.15", "libavif.so")
