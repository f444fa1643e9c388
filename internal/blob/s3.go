package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3 stores objects in an S3-compatible bucket (AWS, MinIO, R2, Supabase Storage…).
type S3 struct {
	client *s3.Client
	bucket string
	prefix string
}

func newS3(ctx context.Context, u *url.URL) (*S3, error) {
	q := u.Query()
	opts := []func(*awsconfig.LoadOptions) error{}
	if r := q.Get("region"); r != "" {
		opts = append(opts, awsconfig.WithRegion(r))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("BLOB_URL: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if e := q.Get("endpoint"); e != "" {
			o.BaseEndpoint = aws.String(e)
		}
		o.UsePathStyle = q.Get("path_style") == "true"
	})
	if u.Host == "" {
		return nil, errors.New("BLOB_URL: s3:// needs a bucket, e.g. s3://my-bucket?region=eu-central-1")
	}
	prefix := u.Path
	if len(prefix) > 0 && prefix[0] == '/' {
		prefix = prefix[1:]
	}
	return &S3{client: client, bucket: u.Host, prefix: prefix}, nil
}

// Put uploads an object.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key), Body: r,
		ContentLength: aws.Int64(size), ContentType: aws.String(contentType),
	})
	return err
}

// Get downloads an object.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

// Delete removes an object.
func (s *S3) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
	return err
}
