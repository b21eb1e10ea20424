// Base64 (RFC 4648 §10 vectors, WHATWG forgiving-base64 rules), data URLs (RFC 2397 / WHATWG
// Fetch data: URL processing), media types and the conversion-time source checks.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "recipe/image/base64.h"
#include "recipe/image/data_url.h"
#include "recipe/image/image_ref_source.h"
#include "recipe/image/image_source.h"
#include "recipe/image/media_type.h"

namespace di::recipe::image {
namespace {

std::string str(const Bytes& b) { return std::string(b.begin(), b.end()); }

TEST(Base64, DecodesRfc4648TestVectors) {
  const std::pair<const char*, const char*> cases[] = {
      {"", ""}, {"Zg==", "f"}, {"Zm8=", "fo"}, {"Zm9v", "foo"},
      {"Zm9vYg==", "foob"}, {"Zm9vYmE=", "fooba"}, {"Zm9vYmFy", "foobar"}};
  for (const auto& [in, out] : cases) {
    auto r = decode_base64(in, "x");
    ASSERT_TRUE(r.is_ok()) << in << ": " << r.status().message();
    EXPECT_EQ(str(*r), out) << in;
  }
}

// WHATWG forgiving-base64: whitespace skipped, padding optional, otherwise strict.
TEST(Base64, FollowsForgivingDecodeRules) {
  EXPECT_EQ(str(*decode_base64("Zg", "x")), "f");
  EXPECT_EQ(str(*decode_base64("Zm8", "x")), "fo");
  EXPECT_EQ(str(*decode_base64(" Zm9v\nYg==\r\n", "x")), "foob");
  EXPECT_EQ(str(*decode_base64("YQ", "x")), "a");
  for (const char* bad : {"Z", "Zg=", "Zg===", "Zm9v!", "ab=c", "Zm9vY", "-_8=", "Zm9v=Zg"}) {
    auto r = decode_base64(bad, "messages[0].content[1].source.data");
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(r.status().message().rfind("messages[0].content[1].source.data: ", 0), 0u)
        << r.status().message();
  }
}

TEST(DataUrl, SplitsTypeMarkerAndBody) {
  auto r = parse_data_url("data:image/png;base64,iVBORw0KGgo=", "f");
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->media_type, "image/png");
  EXPECT_TRUE(r->base64);
  EXPECT_EQ(r->body, "iVBORw0KGgo=");

  auto upper = parse_data_url("DATA:image/PNG; BASE64,aGk=", "f");
  ASSERT_TRUE(upper.is_ok());
  EXPECT_TRUE(upper->base64);
  EXPECT_EQ(str(*decode_data_url_body(*upper, "f")), "hi");

  auto plain = parse_data_url("data:image/gif,GIF89a%00%01", "f");
  ASSERT_TRUE(plain.is_ok());
  EXPECT_FALSE(plain->base64);
  EXPECT_EQ(decode_data_url_body(*plain, "f")->size(), 8u);
  EXPECT_EQ(estimated_decoded_size(*plain), 8u);

  // Percent-decoding happens before base64 decoding; a stray '%' stays literal.
  EXPECT_EQ(str(*decode_data_url_body(*parse_data_url("data:;base64,aGk%3D", "f"), "f")), "hi");
  auto stray = parse_data_url("data:,a%zz%4", "f");
  EXPECT_EQ(str(*decode_data_url_body(*stray, "f")), "a%zz%4");
  EXPECT_EQ(estimated_decoded_size(*stray), 6u);  // stray '%' signs count as bytes
}

TEST(DataUrl, MalformedUrlsNameTheField) {
  for (const char* bad : {"", "data", "dat:image/png;base64,AA", "data:image/png;base64"}) {
    auto r = parse_data_url(bad, "messages[2].content[0].image_url.url");
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().message().rfind("messages[2].content[0].image_url.url: ", 0), 0u);
  }
  auto parsed = parse_data_url("data:image/png;base64,@@@@", "f");
  ASSERT_TRUE(parsed.is_ok());
  EXPECT_FALSE(decode_data_url_body(*parsed, "f").is_ok());
}

TEST(MediaType, ParsesDeclaredTypesLikeTheRecipe) {
  const std::pair<const char*, MediaType> declared[] = {
      {"image/jpeg", MediaType::kJpeg}, {"IMAGE/JPG", MediaType::kJpeg},
      {"image/png; charset=binary", MediaType::kPng}, {" image/webp ", MediaType::kWebp},
      {"image/gif", MediaType::kGif}};
  for (const auto& [text, type] : declared) EXPECT_EQ(parse_media_type(text), type) << text;
  for (const char* text : {"image/bmp", "text/plain", "png", ""})
    EXPECT_FALSE(parse_media_type(text)) << text;
}

TEST(MediaType, SniffsFileSignatures) {
  auto sniff = [](std::string s) {
    Bytes b(s.begin(), s.end());
    return sniff_media_type(b);
  };
  EXPECT_EQ(sniff(std::string("\x89PNG\r\n\x1a\n....", 12)), MediaType::kPng);
  EXPECT_EQ(sniff("\xFF\xD8\xFF\xE0"), MediaType::kJpeg);
  EXPECT_EQ(sniff("GIF89a..."), MediaType::kGif);
  EXPECT_EQ(sniff("GIF87a..."), MediaType::kGif);
  EXPECT_EQ(sniff(std::string("RIFF\x10\x00\x00\x00WEBPVP8 ", 16)), MediaType::kWebp);
  EXPECT_FALSE(sniff(std::string("RIFF\x10\x00\x00\x00WAVEfmt ", 16)));
  EXPECT_FALSE(sniff("BM"));
  EXPECT_FALSE(sniff(""));
}

TEST(ImageSource, ClassifiesUrlsAtConversion) {
  auto http = image_source_from_url("HTTPS://example.com/a.png", ImageDetail::kLow, "f");
  ASSERT_TRUE(http.is_ok());
  EXPECT_EQ(http->kind, ImageSource::Kind::kUrl);
  EXPECT_EQ(http->detail, ImageDetail::kLow);
  EXPECT_EQ(http->field, "f");

  auto data = image_source_from_url("data:image/webp;base64,UklGRg==", ImageDetail::kHigh, "f");
  ASSERT_TRUE(data.is_ok());
  EXPECT_EQ(data->kind, ImageSource::Kind::kDataUrl);

  const std::string long_url = "https://example.com/" + std::string(kMaxImageUrlLen, 'a');
  auto too_long = image_source_from_url(long_url, ImageDetail::kHigh, "input[0].image_url");
  ASSERT_FALSE(too_long.is_ok());
  EXPECT_EQ(too_long.status().code(), StatusCode::kLimit);
  EXPECT_EQ(too_long.status().message().rfind("input[0].image_url: ", 0), 0u);

  auto not_url = image_source_from_url("ftp://example.com/a.png", ImageDetail::kHigh, "f");
  EXPECT_EQ(not_url.status().code(), StatusCode::kInvalidArgument);
  auto not_base64 = image_source_from_url("data:image/png,abc", ImageDetail::kHigh, "f");
  EXPECT_EQ(not_base64.status().code(), StatusCode::kInvalidArgument);
  auto bmp = image_source_from_url("data:image/bmp;base64,Qk0=", ImageDetail::kHigh, "f");
  EXPECT_EQ(bmp.status().code(), StatusCode::kUnsupported);
}

TEST(ImageSource, Base64BlocksAreDecodedWithPaddingNormalized) {
  auto src = image_source_from_base64("image/png", "iVBORw0KGgo", ImageDetail::kAuto,
                                      "messages[0].content[0].source");
  ASSERT_TRUE(src.is_ok()) << src.status().message();
  EXPECT_EQ(src->kind, ImageSource::Kind::kBytes);
  EXPECT_EQ(src->data, (Bytes{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}));

  auto bad_type = image_source_from_base64("image/tiff", "AAAA", ImageDetail::kHigh, "s");
  EXPECT_EQ(bad_type.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(bad_type.status().message().rfind("s.media_type: ", 0), 0u);
  auto bad_data = image_source_from_base64("image/png", "AA=A", ImageDetail::kHigh, "s");
  EXPECT_EQ(bad_data.status().message().rfind("s.data: ", 0), 0u);
  auto empty = image_source_from_base64("image/png", "", ImageDetail::kHigh, "s");
  EXPECT_FALSE(empty.is_ok());
}

TEST(ImageSource, DetailParsesTheFourLevels) {
  const std::pair<const char*, ImageDetail> levels[] = {{"low", ImageDetail::kLow},
                                                        {"high", ImageDetail::kHigh},
                                                        {"original", ImageDetail::kOriginal},
                                                        {"auto", ImageDetail::kAuto}};
  for (const auto& [word, level] : levels) EXPECT_EQ(parse_image_detail(word), level) << word;
  for (const char* word : {"medium", "LOW"}) EXPECT_FALSE(parse_image_detail(word)) << word;
}

TEST(ImageRefSource, ConvertsWhatTheRequestParsersCollect) {
  std::vector<ImageRef> refs(3);
  refs[0].kind = ImageRef::Kind::kUrl;
  refs[0].url = "https://example.com/cat.jpg";
  refs[0].detail = "low";
  refs[1].kind = ImageRef::Kind::kDataUrl;
  refs[1].url = "data:image/png;base64,iVBORw0KGgo=";
  refs[2].kind = ImageRef::Kind::kBase64;
  refs[2].media_type = "image/png";
  refs[2].data = "iVBORw0KGgo";
  auto sources = image_sources_from_refs(refs);
  ASSERT_TRUE(sources.is_ok()) << sources.status().message();
  ASSERT_EQ(sources->size(), 3u);
  EXPECT_EQ((*sources)[0].kind, ImageSource::Kind::kUrl);
  EXPECT_EQ((*sources)[0].detail, ImageDetail::kLow);
  EXPECT_EQ((*sources)[1].kind, ImageSource::Kind::kDataUrl);
  EXPECT_EQ((*sources)[1].detail, ImageDetail::kHigh);
  EXPECT_EQ((*sources)[2].kind, ImageSource::Kind::kBytes);
  EXPECT_EQ((*sources)[2].data.size(), 8u);
  EXPECT_EQ((*sources)[2].field, "images[2]");

  refs[1].detail = "medium";
  auto bad = image_sources_from_refs(refs);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message().rfind("images[1].detail: ", 0), 0u) << bad.status().message();
}

}  // namespace
}  // namespace di::recipe::image
