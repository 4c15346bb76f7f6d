package main

import (
	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/topic"
)

// focusFlags are the flags of a focused crawl's parse.
func focusFlags() []cli.Flag {
	return settingFlags("topic", "link-threshold", "page-threshold", "max-off-topic-hops")
}

// focusOptions learns the topic of topic.files, if any, and returns the
// focused parse's options from the settings (zero without a topic).
func (s *session) focusOptions(c *cli.Context) (jobs.FocusOptions, error) {
	files := s.cfg.List(config.TopicFiles)
	if len(files) == 0 {
		return jobs.FocusOptions{}, nil
	}
	env, err := s.jobsEnv(c)
	if err != nil {
		return jobs.FocusOptions{}, err
	}
	m, err := jobs.LearnTopic(env, files, topic.Options{})
	if err != nil {
		return jobs.FocusOptions{}, usageErrorf("%s: %w", config.TopicFiles, err)
	}
	o := jobs.FocusOptions{
		Topic:           m,
		LinkThreshold:   s.cfg.Float(config.TopicLinkThreshold),
		PageThreshold:   s.cfg.Float(config.TopicPageThreshold),
		MaxOffTopicHops: s.cfg.Int(config.TopicMaxOffTopicHops),
	}
	// 0 would mean the package default: a threshold of 0 follows every
	// link or keeps every page on topic, as a negative one does.
	if o.LinkThreshold == 0 {
		o.LinkThreshold = -1
	}
	if o.PageThreshold == 0 {
		o.PageThreshold = -1
	}
	if err := o.Validate(); err != nil {
		return o, usageErrorf("%v", err)
	}
	return o, nil
}
