// libheif, opened on first use (see include/CCodecLoader.h).
#include <libheif/heif.h>
#include "lazy.h"

#define HEIF_FUNCTIONS(F, V)                                                                       \
    F(struct heif_context *, heif_context_alloc, (void), ())                                      \
    F(struct heif_error, heif_context_encode_image,                                               \
      (struct heif_context *ctx, const struct heif_image *image, struct heif_encoder *encoder,    \
       const struct heif_encoding_options *options, struct heif_image_handle **out),              \
      (ctx, image, encoder, options, out))                                                        \
    V(heif_context_free, (struct heif_context *ctx), (ctx))                                       \
    F(struct heif_error, heif_context_get_encoder_for_format,                                     \
      (struct heif_context *ctx, enum heif_compression_format format, struct heif_encoder **out), (ctx, format, out)) \
    F(struct heif_error, heif_context_get_primary_image_handle,                                   \
      (struct heif_context *ctx, struct heif_image_handle **out), (ctx, out))                     \
    F(struct heif_error, heif_context_read_from_memory_without_copy,                              \
      (struct heif_context *ctx, const void *mem, size_t size, const struct heif_reading_options *options), \
      (ctx, mem, size, options))                                                                  \
    V(heif_context_set_max_decoding_threads, (struct heif_context *ctx, int threads), (ctx, threads)) \
    F(struct heif_error, heif_context_write, (struct heif_context *ctx, struct heif_writer *writer, void *userdata), \
      (ctx, writer, userdata))                                                                    \
    F(struct heif_error, heif_decode_image,                                                       \
      (const struct heif_image_handle *handle, struct heif_image **out, enum heif_colorspace colorspace, \
       enum heif_chroma chroma, const struct heif_decoding_options *options),                     \
      (handle, out, colorspace, chroma, options))                                                 \
    F(struct heif_decoding_options *, heif_decoding_options_alloc, (void), ())                    \
    V(heif_decoding_options_free, (struct heif_decoding_options *options), (options))             \
    V(heif_encoder_release, (struct heif_encoder *encoder), (encoder))                            \
    F(struct heif_error, heif_encoder_set_logging_level, (struct heif_encoder *encoder, int level), (encoder, level)) \
    F(struct heif_error, heif_encoder_set_lossy_quality, (struct heif_encoder *encoder, int quality), (encoder, quality)) \
    F(struct heif_error, heif_image_add_plane,                                                    \
      (struct heif_image *image, enum heif_channel channel, int width, int height, int depth),    \
      (image, channel, width, height, depth))                                                     \
    F(struct heif_error, heif_image_create,                                                       \
      (int width, int height, enum heif_colorspace colorspace, enum heif_chroma chroma, struct heif_image **out), \
      (width, height, colorspace, chroma, out))                                                   \
    F(int, heif_image_get_bits_per_pixel_range, (const struct heif_image *image, enum heif_channel channel), \
      (image, channel))                                                                           \
    F(int, heif_image_get_height, (const struct heif_image *image, enum heif_channel channel), (image, channel)) \
    F(uint8_t *, heif_image_get_plane, (struct heif_image *image, enum heif_channel channel, int *stride), \
      (image, channel, stride))                                                                   \
    F(const uint8_t *, heif_image_get_plane_readonly,                                             \
      (const struct heif_image *image, enum heif_channel channel, int *stride), (image, channel, stride)) \
    F(int, heif_image_get_width, (const struct heif_image *image, enum heif_channel channel), (image, channel)) \
    F(enum heif_color_profile_type, heif_image_handle_get_color_profile_type,                      \
      (const struct heif_image_handle *handle), (handle))                                         \
    F(int, heif_image_handle_get_height, (const struct heif_image_handle *handle), (handle))      \
    F(int, heif_image_handle_get_luma_bits_per_pixel, (const struct heif_image_handle *handle), (handle)) \
    F(struct heif_error, heif_image_handle_get_nclx_color_profile,                                \
      (const struct heif_image_handle *handle, struct heif_color_profile_nclx **out), (handle, out)) \
    F(struct heif_error, heif_image_handle_get_raw_color_profile,                                 \
      (const struct heif_image_handle *handle, void *out), (handle, out))                         \
    F(size_t, heif_image_handle_get_raw_color_profile_size, (const struct heif_image_handle *handle), (handle)) \
    F(int, heif_image_handle_get_width, (const struct heif_image_handle *handle), (handle))       \
    F(int, heif_image_handle_has_alpha_channel, (const struct heif_image_handle *handle), (handle)) \
    F(int, heif_image_handle_is_premultiplied_alpha, (const struct heif_image_handle *handle), (handle)) \
    V(heif_image_handle_release, (const struct heif_image_handle *handle), (handle))              \
    V(heif_image_release, (const struct heif_image *image), (image))                              \
    V(heif_nclx_color_profile_free, (struct heif_color_profile_nclx *profile), (profile))          \
    F(struct heif_error, heif_init, (struct heif_init_params *params), (params))

WEBIMAGE_LAZY_LIBRARY(heif, HEIF_FUNCTIONS, "libheif1", "libheif.so.1", "libheif.so")
